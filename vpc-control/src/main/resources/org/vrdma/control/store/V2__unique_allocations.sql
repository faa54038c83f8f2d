-- The database itself refuses a second VPC with the same VNI, and a second ENI with the same
-- address in a subnet or the same MAC: the service checks first for a readable error, these
-- indexes hold even if a future code path forgets.
CREATE UNIQUE INDEX vpc_vni ON resources (json_extract(body, '$.vni')) WHERE kind = 'vpc';
CREATE UNIQUE INDEX eni_ip ON resources (json_extract(body, '$.subnetId'), json_extract(body, '$.ip')) WHERE kind = 'eni';
CREATE UNIQUE INDEX eni_mac ON resources (json_extract(body, '$.mac')) WHERE kind = 'eni';
CREATE INDEX resources_revision ON resources (revision);
